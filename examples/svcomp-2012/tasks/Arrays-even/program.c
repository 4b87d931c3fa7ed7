/* Arrays-even: SAFE.
 * The loop writes a[i] = 2 * i for i = 0..9, so every cell of a holds an even number in
 * [0, 18]; k is assumed in [0, 9], so a[k] is one of those cells (no out-of-bounds read) and
 * `a[k] % 2 != 0` is false: ERROR is unreachable. */
extern int __VERIFIER_nondet_int(void);
extern void __VERIFIER_assume(int cond);

int main(void)
{
    int a[10];
    int i, k;
    for (i = 0; i < 10; i++)
        a[i] = 2 * i;
    k = __VERIFIER_nondet_int();
    __VERIFIER_assume(k >= 0 && k < 10);
    if (a[k] % 2 != 0) {
    ERROR: goto ERROR;
    }
    return 0;
}
