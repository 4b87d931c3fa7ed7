/* ControlFlow-locks-bug: UNSAFE.
 * As ControlFlow-locks, but lock 2 is taken under the wrong condition (p3 instead of p2).
 * Error path: cond = 1, p1 = 0, p2 = 1, p3 = 0. Then lk2 stays 0 (p3 == 0), and the release
 * of lock 2 (p2 != 0) finds lk2 != 1: ERROR is reached in the first iteration. */
extern int __VERIFIER_nondet_int(void);

int main(void)
{
    int p1, p2, p3, lk1, lk2, lk3, cond;
    while (1) {
        cond = __VERIFIER_nondet_int();
        if (cond == 0)
            break;
        p1 = __VERIFIER_nondet_int();
        p2 = __VERIFIER_nondet_int();
        p3 = __VERIFIER_nondet_int();
        lk1 = 0;
        lk2 = 0;
        lk3 = 0;
        if (p1 != 0) lk1 = 1;
        if (p3 != 0) lk2 = 1;          /* the bug: should test p2 */
        if (p3 != 0) lk3 = 1;

        if (p1 != 0) {
            if (lk1 != 1) goto ERROR;
            lk1 = 0;
        }
        if (p2 != 0) {
            if (lk2 != 1) goto ERROR;
            lk2 = 0;
        }
        if (p3 != 0) {
            if (lk3 != 1) goto ERROR;
            lk3 = 0;
        }
    }
    return 0;
ERROR:
    goto ERROR;
}
