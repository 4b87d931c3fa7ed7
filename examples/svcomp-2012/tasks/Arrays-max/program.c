/* Arrays-max: SAFE.
 * max starts as a[0] and the loop visits a[1..4], replacing max by any larger cell: after the
 * loop max >= a[i] for every i in 0..4 (loop invariant: max >= a[0..i-1]). The check loop then
 * never finds a[i] > max: ERROR is unreachable. */
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
    for (i = 1; i < N; i++)
        if (a[i] > max)
            max = a[i];
    for (i = 0; i < N; i++)
        __VERIFIER_assert(a[i] <= max);
    return 0;
}
