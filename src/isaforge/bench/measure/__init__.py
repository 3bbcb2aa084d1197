"""How the bench measures, without Arm hardware: llvm-mca's pricing of hot loops (mca), instruction counts from
QEMU's execution log (qemu_log, qemu_count, on a program linked statically: executable), whole calls priced block by
block (wholecall), and the bytes each load reads (loadbytes)."""
