/* Arrays-max-bug: UNSAFE.
 * As Arrays-max, but the search loop stops at i < N - 1 and never looks at a[4]. Error path:
 * a = {0, 0, 0, 0, 1}: max = 0, and the check of a[4] <= max fails: ERROR is reached. */
extern int __VERIFIER_nondet_int(void);

#define N 5

void __VERIFIER_assert(int cond)
{
    if (!cond) {
    ERROR: goto ERROR;
    }
}

int main(void)
{
    int a[N];
    int i, max;
    for (i = 0; i < N; i++)
        a[i] = __VERIFIER_nondet_int();
    max = a[0];
    for (i = 1; i < N - 1; i++)
        if (a[i] > max)
            max = a[i];
    for (i = 0; i < N; i++)
        __VERIFIER_assert(a[i] <= max);
    return 0;
}
