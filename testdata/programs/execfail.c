/* execfail.c: an exec that fails, then more work.
 *
 * Exercises the recorder's handling of execve: before the call the probe
 * hands its buffers back to the recorder (a successful exec would end
 * this program image); when the call fails, the program goes on and its
 * events must still be recorded.
 *
 * Output: `exec returned -1, sum 84`; exit 0.
 * A test should assert: that output; the trace holds the stores of the
 * loop on the line marked AFTER (eight of them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	char *argv[] = {"nothing", NULL};
	int r = execv("/nonexistent/program", argv);
	long *p = malloc(8 * sizeof *p);
	long s = 0;
	if (p == NULL) {
		return 1;
	}
	for (int i = 0; i < 8; i++) {
		p[i] = i * 3; /* AFTER */
		s += p[i];
	}
	printf("exec returned %d, sum %ld\n", r, s);
	free(p);
	return 0;
}
