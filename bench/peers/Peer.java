// Peer.java HEAP_MIB N TARGET: the Java peer of `forkless bench peers`.
// Allocates and touches a heap of HEAP_MIB MiB (byte[]s of 256 MiB, one
// write every 4096 bytes; the bench sizes -Xmx to fit), spawns and waits for
// TARGET with ProcessBuilder 3 times untimed, then N times timed. Prints
// "# version java ...", then one line per timed spawn: its microseconds.
public class Peer {
    // An array holds less than 2 GiB (its index is an int): the heap is as
    // many arrays as it takes, each small enough for the collector to find
    // room for it in one piece.
    static final long CHUNK = 256L << 20;
    static byte[][] heap;

    static void touch(long bytes) {
        heap = new byte[(int) ((bytes + CHUNK - 1) / CHUNK)][];
        for (int c = 0; c < heap.length; c++) {
            byte[] a = new byte[(int) Math.min(CHUNK, bytes - c * CHUNK)];
            for (int i = 0; i < a.length; i += 4096)
                a[i] = 1;
            heap[c] = a;
        }
    }

    static void run(String target) throws Exception {
        Process p = new ProcessBuilder(target).inheritIO().start();
        int st = p.waitFor();
        if (st != 0) {
            System.err.println("Peer.java: " + target + " exited " + st);
            System.exit(1);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: java Peer HEAP_MIB N TARGET");
            System.exit(2);
        }
        int mib = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        String target = args[2];
        touch((long) mib << 20);
        for (int k = 0; k < 3; k++)
            run(target);
        StringBuilder out = new StringBuilder();
        out.append("# version java ").append(System.getProperty("java.version"))
           .append(" (").append(System.getProperty("java.vm.name")).append(")\n");
        for (int k = 0; k < n; k++) {
            long t0 = System.nanoTime();
            run(target);
            long t1 = System.nanoTime();
            out.append(String.format(java.util.Locale.ROOT, "%.3f%n", (t1 - t0) / 1e3));
        }
        System.out.print(out);
        System.out.flush();
    }
}
