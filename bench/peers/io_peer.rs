// io_peer.rs MIB N WRITER: the Rust peer of `forkless bench io`. Runs
// WRITER MIB with std::process::Command::output() once untimed, then N times
// timed, checking that MIB MiB came back each time. Prints
// "# version rustc ...", then one line per timed capture: its microseconds.
use std::io::Write;
use std::process::{exit, Command};
use std::time::Instant;

fn capture(writer: &str, mib: usize) {
    let out = Command::new(writer).arg(mib.to_string()).output().unwrap_or_else(|e| {
        eprintln!("io_peer.rs: {}: {}", writer, e);
        exit(1)
    });
    if !out.status.success() || out.stdout.len() != mib << 20 {
        eprintln!("io_peer.rs: {}: {}, {} bytes", writer, out.status, out.stdout.len());
        exit(1);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: io_peer_rust MIB N WRITER");
        exit(2);
    }
    let mib: usize = args[1].parse().expect("MIB");
    let n: usize = args[2].parse().expect("N");
    let writer = &args[3];
    capture(writer, mib);
    let mut out = format!("# version {}\n",
                          option_env!("FL_RUSTC_VERSION").unwrap_or("rustc ?"));
    for _ in 0..n {
        let t0 = Instant::now();
        capture(writer, mib);
        let us = t0.elapsed().as_nanos() as f64 / 1e3;
        out.push_str(&format!("{:.3}\n", us));
    }
    std::io::stdout().write_all(out.as_bytes()).unwrap();
}
