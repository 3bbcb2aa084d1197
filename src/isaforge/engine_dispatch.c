/* An engine's dispatch (docs/engines.md). enginegen.py generates its code into the engine's build directory as
 * isaforge_engine.inc; build systems compile it through this fixed source, which they take as a plain source file
 * (Meson refuses generated files named by string). */
#include "isaforge_engine.inc"
