/* ControlFlow-locks: SAFE (the pattern of SV-COMP's test_locks programs).
 * In every iteration, lock k is taken (lk_k = 1) exactly when p_k != 0, and the second half
 * releases it under the same condition p_k != 0, which is not modified in between. So when
 * `p_k != 0` is tested the second time, lk_k == 1 was set in the same iteration and the test
 * `lk_k != 1` is false: ERROR is unreachable. (An interval analysis that merges the paths sees
 * lk_k in {0, 1} and p_k anything, and cannot conclude without path sensitivity.) */
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
        if (p2 != 0) lk2 = 1;
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
