/* ControlFlow-abs: SAFE.
 * x is assumed in [-999, 999]. If x < 0 then y = -x lies in [1, 999], otherwise y = x lies in
 * [0, 999]: y >= 0 on both branches (no overflow: |x| <= 999), so `y < 0` never holds and ERROR
 * is unreachable. */
extern int __VERIFIER_nondet_int(void);
extern void __VERIFIER_assume(int cond);

int main(void)
{
    int x = __VERIFIER_nondet_int();
    int y;
    __VERIFIER_assume(x > -1000 && x < 1000);
    if (x < 0)
        y = -x;
    else
        y = x;
    if (y < 0) {
    ERROR: goto ERROR;
    }
    return 0;
}
