// peer.js HEAP_MIB N TARGET: the Node peer of `forkless bench peers`.
// Allocates and touches a heap of HEAP_MIB MiB (Buffers of 256 MiB, one
// write every 4096 bytes), spawns and waits for TARGET with child_process.spawnSync()
// 3 times untimed, then N times timed. Prints "# version node vX.Y.Z", then
// one line per timed spawn: its microseconds.
'use strict';
const { spawnSync } = require('child_process');

function run(target) {
  const r = spawnSync(target, [], { stdio: 'inherit' });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${target} exited ${r.status} ${r.signal || ''}`);
}

if (process.argv.length !== 5) {
  process.stderr.write('usage: peer.js HEAP_MIB N TARGET\n');
  process.exit(2);
}
const mib = parseInt(process.argv[2], 10);
const n = parseInt(process.argv[3], 10);
const target = process.argv[4];
// A Buffer holds at most buffer.constants.MAX_LENGTH bytes (4 GiB in Node
// 20): the heap is as many Buffers as it takes.
const CHUNK = 256 * 1024 * 1024;
const heap = [];
for (let left = mib * 1024 * 1024; left > 0; left -= CHUNK) {
  const b = Buffer.alloc(Math.min(CHUNK, left));
  for (let i = 0; i < b.length; i += 4096) b[i] = 1;
  heap.push(b);
}
for (let k = 0; k < 3; k++) run(target);
const out = [`# version node ${process.version}`];
for (let k = 0; k < n; k++) {
  const t0 = process.hrtime.bigint();
  run(target);
  const t1 = process.hrtime.bigint();
  out.push((Number(t1 - t0) / 1e3).toFixed(3));
}
process.stdout.write(out.join('\n') + '\n');
if (heap.length < 0) console.log(heap[0][0]);  // keep the heap alive
