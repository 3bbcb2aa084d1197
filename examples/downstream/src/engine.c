/* Run-time dispatch of the engine's kernel from the CPU features libisaforge detects. */
#include <isaforge/isaforge.h>

#include "engine.h"

static engine_dot_fn chosen;
static const char *chosen_name;

static void choose(void) {
    chosen = engine_dot_s8_plain;
    chosen_name = "plain";
#if defined(ENGINE_HAVE_DOTPROD)
    if (isf_cpu_features() & ISF_FEATURE_DOTPROD) {
        chosen = engine_dot_s8_dotprod;
        chosen_name = "dotprod";
    }
#endif
}

int32_t engine_dot_s8(const int8_t *a, const int8_t *b, size_t n) {
    if (chosen == NULL) {
        choose();
    }
    return chosen(a, b, n);
}

const char *engine_dot_s8_variant(void) {
    if (chosen == NULL) {
        choose();
    }
    return chosen_name;
}
