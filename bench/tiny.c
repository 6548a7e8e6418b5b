/* tiny.c: the bench's target. A static program with no libc and no
 * start-up code: _start calls exit_group(0). Starting it costs the kernel's
 * execve and exit, nothing of its own. */
#if defined(__x86_64__)
__asm__(".text\n"
        ".globl _start\n"
        ".type _start, @function\n"
        "_start:\n"
        "  mov $231, %eax\n"        /* __NR_exit_group */
        "  xor %edi, %edi\n"
        "  syscall\n"
        "  hlt\n");
#elif defined(__aarch64__)
__asm__(".text\n"
        ".globl _start\n"
        ".type _start, %function\n"
        "_start:\n"
        "  mov x8, #94\n"           /* __NR_exit_group */
        "  mov x0, #0\n"
        "  svc #0\n"
        "  brk #0\n");
#elif defined(__i386__)
__asm__(".text\n"
        ".globl _start\n"
        "_start:\n"
        "  mov $252, %eax\n"        /* __NR_exit_group */
        "  xor %ebx, %ebx\n"
        "  int $0x80\n"
        "  hlt\n");
#else
#error "tiny: no _start for this architecture; add one (exit_group(0))"
#endif
