"""Modeled efficiency of the micro-kernels' hot loops: llvm-objdump finds the loop, llvm-mca times it.

For every aarch64 micro-kernel `isf_ukernel_<name>` of a build (libisaforge.a), the hot loop is found in the
object code itself: among the loops closed by a backward branch, the one whose body holds the most MAC instructions
of the kernel's kind (the MAC instruction the function uses most; ties go to the smaller body). The body goes to
`llvm-mca-19 -mcpu=<core> -mattr=<the variant's features>`, and the simulated cycles per iteration give MACs per
cycle. The peak is measured the same way, never typed in: llvm-mca runs a stream of independent instructions of the
kernel's own MAC kind (same mnemonic, arrangement and by-element form, one accumulator each) on the same core; for
widening multiplies that do not accumulate (smull/smull2) the stream is their own mix with the accumulating
instructions of the loop (sadalp), in the loop's ratio.

MACs of one instruction = lanes of its destination × products summed into each lane (fmla 1, sdot 4, smmla 8,
bfmmla 4, bfdot 2); sadalp only accumulates (0). SVE lanes scale with the core's vector length.

- objcode: llvm-objdump's disassembly of a library, and the loops in it.
- macs: which instructions multiply-accumulate and how many MACs each does; hot loops; the reference streams.
- cores: the cores modeled, their ISA and scheduling models, as LLVM knows them.
- llvm_mca: running llvm-mca-19 and reading its --json report.
- analyse: every kernel of a build on every core, against the peak of its MAC kind.
"""
