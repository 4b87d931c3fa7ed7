/* ControlFlow-password: UNSAFE, hard for random testing.
 * Error path: the three inputs 2012, 3, 31. The digits are checked one by one; with a = 2012,
 * b = 3, c = 31 every test passes (2012 % 1000 == 12, 2012 / 1000 == 2, b * 10 + 1 == 31 == c),
 * so ERROR is reached. A random input hits this combination with probability about 2^-96
 * (uniform ints), and a tester biased towards small values does not produce 2012 and 31. */
extern int __VERIFIER_nondet_int(void);

int check(int a, int b, int c)
{
    if (a / 1000 != 2)
        return 0;
    if (a % 1000 != 12)
        return 0;
    if (b != 3)
        return 0;
    if (c != b * 10 + 1)
        return 0;
    return 1;
}

int main(void)
{
    int a = __VERIFIER_nondet_int();
    int b = __VERIFIER_nondet_int();
    int c = __VERIFIER_nondet_int();
    if (b < -1000 || b > 1000)          /* keeps b * 10 + 1 free of overflow */
        return 0;
    if (check(a, b, c)) {
    ERROR: goto ERROR;
    }
    return 0;
}
