/* Loops-sum-bug: UNSAFE.
 * As Loops-sum, but the loop stops at i < n and misses the last term: sum == (n-1)*n/2, so
 * 2*sum == n*(n+1) - 2n, which differs from n*(n+1) whenever n >= 1. Error path: n = 1 (the loop
 * does not run, sum = 0, 2*sum = 0 != 2): ERROR is reached. */
extern int __VERIFIER_nondet_int(void);
extern void __VERIFIER_assume(int cond);

int main(void)
{
    int n = __VERIFIER_nondet_int();
    int i, sum = 0;
    __VERIFIER_assume(n >= 0 && n <= 1000);
    for (i = 1; i < n; i++)
        sum += i;
    if (2 * sum != n * (n + 1)) {
    ERROR: goto ERROR;
    }
    return 0;
}
