/* grades.c: a wrong output, the fourth case study. Grades three scores
   (95, 72, 90) with the threshold test of the line marked FAULT, `> 90`
   where the specification says 90 and above is an A: prints `95 A`,
   `72 B`, `90 B` where `90 A` is expected (grades.expected holds the
   right output). Inverting the FAULT line's third execution (the score
   90) gives the expected output, exit 0. */
#include <stdio.h>

static const int scores[] = {95, 72, 90};

__attribute__((noipa)) static char grade(int score)
{
	volatile char g; /* volatile: a branch, not a conditional move */
	if (score > 90) /* FAULT: should be score >= 90 */
		g = 'A';
	else
		g = 'B';
	return g;
}

int main(void)
{
	for (int i = 0; i < 3; i++)
		printf("%d %c\n", scores[i], grade(scores[i]));
	return 0;
}
