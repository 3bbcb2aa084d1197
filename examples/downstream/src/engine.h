/* The engine's own kernel: an int8 dot product, in one variant per instruction set, chosen at run time. */
#ifndef ENGINE_H
#define ENGINE_H

#include <stddef.h>
#include <stdint.h>

typedef int32_t (*engine_dot_fn)(const int8_t *a, const int8_t *b, size_t n);

int32_t engine_dot_s8_plain(const int8_t *a, const int8_t *b, size_t n);
int32_t engine_dot_s8_dotprod(const int8_t *a, const int8_t *b, size_t n); /* Armv8.2 SDOT; only if built */

int32_t engine_dot_s8(const int8_t *a, const int8_t *b, size_t n); /* the variant chosen for this CPU */
const char *engine_dot_s8_variant(void);

#endif
