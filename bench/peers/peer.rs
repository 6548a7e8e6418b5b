// peer.rs HEAP_MIB N TARGET: the Rust peer of `forkless bench peers`.
// Allocates and touches a heap of HEAP_MIB MiB (a Vec<u8>, one write every
// 4096 bytes), spawns and waits for TARGET with std::process::Command 3 times
// untimed, then N times timed. Prints "# version rust ...", then one line
// per timed spawn: its microseconds.
use std::io::Write;
use std::process::{exit, Command};
use std::time::Instant;

fn run(target: &str) {
    let st = Command::new(target).status().unwrap_or_else(|e| {
        eprintln!("peer.rs: {}: {}", target, e);
        exit(1)
    });
    if !st.success() {
        eprintln!("peer.rs: {}: {}", target, st);
        exit(1);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 2 && args[1] == "--version" {
        println!("{}", option_env!("FL_RUSTC_VERSION").unwrap_or("rustc ?"));
        return;
    }
    if args.len() != 4 {
        eprintln!("usage: peer_rust HEAP_MIB N TARGET");
        exit(2);
    }
    let mib: usize = args[1].parse().expect("HEAP_MIB");
    let n: usize = args[2].parse().expect("N");
    let target = &args[3];
    let mut heap = vec![0u8; mib << 20];
    let mut i = 0;
    while i < heap.len() {
        heap[i] = 1;
        i += 4096;
    }
    for _ in 0..3 {
        run(target);
    }
    let mut out = format!("# version {}\n",
                          option_env!("FL_RUSTC_VERSION").unwrap_or("rustc ?"));
    for _ in 0..n {
        let t0 = Instant::now();
        run(target);
        let us = t0.elapsed().as_nanos() as f64 / 1e3;
        out.push_str(&format!("{:.3}\n", us));
    }
    std::io::stdout().write_all(out.as_bytes()).unwrap();
    std::hint::black_box(&heap);
}
