/* ControlFlow-switch: UNSAFE.
 * A state machine read over four nondeterministic inputs: 0 -(c > 0)-> 1 -(c even)-> 2
 * -(c < 0)-> 3, any other input goes back to 0, and 3 stays 3. Error path: inputs 1, 2, -1 and
 * anything: the states are 1, 2, 3, 3, and after the loop state == 3 reaches ERROR. */
extern int __VERIFIER_nondet_int(void);

int main(void)
{
    int state = 0;
    int step;
    for (step = 0; step < 4; step++) {
        int c = __VERIFIER_nondet_int();
        switch (state) {
        case 0:
            state = c > 0 ? 1 : 0;
            break;
        case 1:
            state = c % 2 == 0 ? 2 : 0;
            break;
        case 2:
            state = c < 0 ? 3 : 0;
            break;
        default:
            break;
        }
    }
    if (state == 3) {
    ERROR: goto ERROR;
    }
    return 0;
}
