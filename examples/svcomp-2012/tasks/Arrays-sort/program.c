/* Arrays-sort: SAFE.
 * Insertion sort of 4 arbitrary ints: after pass i, a[0..i] is sorted (the standard invariant;
 * the inner loop shifts the larger cells right and inserts the key before the first cell <= it,
 * and j never goes below -1, so every access is in bounds). After the sort a[0..3] is sorted
 * and no `a[i] > a[i + 1]` holds: ERROR is unreachable. */
extern int __VERIFIER_nondet_int(void);

#define N 4

int main(void)
{
    int a[N];
    int i, j, key;
    for (i = 0; i < N; i++)
        a[i] = __VERIFIER_nondet_int();
    for (i = 1; i < N; i++) {
        key = a[i];
        j = i - 1;
        while (j >= 0 && a[j] > key) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = key;
    }
    for (i = 0; i + 1 < N; i++) {
        if (a[i] > a[i + 1]) {
            goto ERROR;
        }
    }
    return 0;
ERROR:
    goto ERROR;
}
