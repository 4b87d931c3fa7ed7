/* Loops-sum: SAFE.
 * n is assumed in [0, 1000]. The loop adds 1, 2, ..., n to sum (invariant: sum == i*(i-1)/2 at
 * the loop head with 1 <= i <= n + 1), so at the exit sum == n*(n+1)/2 and 2*sum == n*(n+1).
 * sum <= 500500 and n*(n+1) <= 1001000: no overflow. ERROR is unreachable. */
extern int __VERIFIER_nondet_int(void);
extern void __VERIFIER_assume(int cond);

int main(void)
{
    int n = __VERIFIER_nondet_int();
    int i, sum = 0;
    __VERIFIER_assume(n >= 0 && n <= 1000);
    for (i = 1; i <= n; i++)
        sum += i;
    if (2 * sum != n * (n + 1)) {
    ERROR: goto ERROR;
    }
    return 0;
}
