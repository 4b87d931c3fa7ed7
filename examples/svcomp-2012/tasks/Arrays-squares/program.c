/* Arrays-squares: UNSAFE.
 * a[i] = i * i for i = 0..9; k is assumed in [0, 9]. Error path: k = 7, a[7] == 49: ERROR is
 * reached. (Every other k gives another square, but one path suffices.) */
extern int __VERIFIER_nondet_int(void);
extern void __VERIFIER_assume(int cond);

int main(void)
{
    int a[10];
    int i, k;
    for (i = 0; i < 10; i++)
        a[i] = i * i;
    k = __VERIFIER_nondet_int();
    __VERIFIER_assume(k >= 0 && k < 10);
    if (a[k] == 49) {
    ERROR: goto ERROR;
    }
    return 0;
}
