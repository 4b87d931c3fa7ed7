/* Included before the task by frama-c-eva: the SV-COMP 2012 conventions for EVA.
 * __VERIFIER_nondet_X() returns any value of type X (Frama-C's interval built-ins), and
 * __VERIFIER_assume(e) is the procedure's "if e is 0, loop for ever" written as a macro, so that
 * EVA reduces the state by the condition itself (a function call would only see its value). */
#include "__fc_builtin.h"
#include <limits.h>

void Frama_C_show_each_ERROR(void);   /* instrumented after each ERROR label: printed when reached */

static int __VERIFIER_nondet_int(void) { return Frama_C_int_interval(INT_MIN, INT_MAX); }
static unsigned int __VERIFIER_nondet_uint(void) { return Frama_C_unsigned_int_interval(0, UINT_MAX); }
static short __VERIFIER_nondet_short(void) { return Frama_C_short_interval(SHRT_MIN, SHRT_MAX); }
static unsigned short __VERIFIER_nondet_ushort(void) { return Frama_C_unsigned_short_interval(0, USHRT_MAX); }
static char __VERIFIER_nondet_char(void) { return Frama_C_char_interval(CHAR_MIN, CHAR_MAX); }
static unsigned char __VERIFIER_nondet_uchar(void) { return Frama_C_unsigned_char_interval(0, UCHAR_MAX); }
static long __VERIFIER_nondet_long(void) { return Frama_C_long_interval(LONG_MIN, LONG_MAX); }
static _Bool __VERIFIER_nondet_bool(void) { return Frama_C_int_interval(0, 1); }
static int nondet_int(void) { return Frama_C_int_interval(INT_MIN, INT_MAX); }

#ifndef SVCOMP_OWN_ASSUME
#define __VERIFIER_assume(e) do { if (!(e)) { for (;;) ; } } while (0)
#endif
