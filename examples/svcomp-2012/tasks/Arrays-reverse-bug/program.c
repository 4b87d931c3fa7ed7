/* Arrays-reverse-bug: UNSAFE.
 * The in-place reversal of 6 cells runs i = 0..3 (i <= N/2 instead of i < N/2): i = 2 swaps
 * cells 2 and 3, and i = 3 swaps them back. So a[2] == b[2] at the end, while a reversed array
 * needs a[2] == b[3]. Error path: b = {0, 0, 1, 0, 0, 0}: the check of i = 2 finds
 * a[2] == 1 != b[3] == 0 and ERROR is reached. */
extern int __VERIFIER_nondet_int(void);

#define N 6

void __VERIFIER_assert(int cond)
{
    if (!cond) {
    ERROR: goto ERROR;
    }
}

int main(void)
{
    int a[N], b[N];
    int i, t;
    for (i = 0; i < N; i++) {
        a[i] = __VERIFIER_nondet_int();
        b[i] = a[i];
    }
    for (i = 0; i <= N / 2; i++) {
        t = a[i];
        a[i] = a[N - 1 - i];
        a[N - 1 - i] = t;
    }
    for (i = 0; i < N; i++)
        __VERIFIER_assert(a[i] == b[N - 1 - i]);
    return 0;
}
