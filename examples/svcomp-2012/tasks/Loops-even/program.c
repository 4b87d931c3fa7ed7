/* Loops-even: SAFE.
 * i starts at 0 and only grows by 2, so i is even at every point (invariant i % 2 == 0); n is
 * assumed in [0, 1000], so the loop ends with i <= 1001 (no overflow). After the loop i is even
 * and `i % 2 != 0` is false: ERROR is unreachable. */
extern int __VERIFIER_nondet_int(void);
extern void __VERIFIER_assume(int cond);

int main(void)
{
    int n = __VERIFIER_nondet_int();
    int i = 0;
    __VERIFIER_assume(n >= 0 && n <= 1000);
    while (i < n)
        i += 2;
    if (i % 2 != 0) {
    ERROR: goto ERROR;
    }
    return 0;
}
