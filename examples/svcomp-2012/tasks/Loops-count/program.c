/* Loops-count: SAFE.
 * n is assumed in [0, 1000]; i counts from 0 by steps of 1 while i < n. Invariant: i <= n
 * (true at the start since n >= 0, kept since i < n before i++). At the exit i >= n, hence
 * i == n and `i != n` is false: ERROR is unreachable. The proof needs the relation i <= n, which
 * intervals alone (i in [0, 1000], n in [0, 1000]) do not give. */
extern int __VERIFIER_nondet_int(void);
extern void __VERIFIER_assume(int cond);

int main(void)
{
    int n = __VERIFIER_nondet_int();
    int i = 0;
    __VERIFIER_assume(n >= 0 && n <= 1000);
    while (i < n)
        i++;
    if (i != n) {
    ERROR: goto ERROR;
    }
    return 0;
}
