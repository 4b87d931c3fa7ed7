/* Loops-collatz: UNSAFE (a deterministic program, with a long loop).
 * The Collatz sequence of 27 reaches 1 after 111 steps (its largest value is 9232, far from any
 * overflow): the loop ends with steps == 111 and ERROR is reached on the only path. A tool must
 * follow 111 iterations of a loop whose count is not visible in the code. */
void __VERIFIER_assert(int cond)
{
    if (!cond) {
    ERROR: goto ERROR;
    }
}

int main(void)
{
    int n = 27;
    int steps = 0;
    while (n != 1) {
        if (n % 2 == 0)
            n = n / 2;
        else
            n = 3 * n + 1;
        steps++;
    }
    __VERIFIER_assert(steps != 111);
    return 0;
}
