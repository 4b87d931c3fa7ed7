/* ControlFlow-min-bug: UNSAFE.
 * min3 compares c with b instead of with the minimum so far. Error path: a = 0, b = 2, c = 1:
 * m = 0 after the first two lines, then c < b replaces it by 1, and min3 returns 1 > a: the
 * check `m > a` holds and ERROR is reached. */
extern int __VERIFIER_nondet_int(void);

int min3(int a, int b, int c)
{
    int m = a;
    if (b < m)
        m = b;
    if (c < b)              /* the bug: should compare c with m */
        m = c;
    return m;
}

int main(void)
{
    int a = __VERIFIER_nondet_int();
    int b = __VERIFIER_nondet_int();
    int c = __VERIFIER_nondet_int();
    int m = min3(a, b, c);
    if (m > a || m > b || m > c) {
    ERROR: goto ERROR;
    }
    return 0;
}
