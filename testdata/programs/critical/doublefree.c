/* doublefree.c: a double free, the suppression case. A buffer is freed
   (line marked FIRST-FREE), and freed again on the error path (line
   marked FAULT): glibc's allocator detects it, prints `free(): double
   free detected in tcache 2` and aborts (SIGABRT). Prints `len 5` first.
   Suppressing the second free() call (record --suppress at the FAULT
   line) removes the abort: the run prints `done` and exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noipa)) static int process(char *buf)
{
	size_t n = strlen(buf);
	printf("len %zu\n", n);
	fflush(stdout);
	free(buf); /* FIRST-FREE */
	return n > 4 ? -1 : 0;
}

int main(void)
{
	char *buf = malloc(32);
	if (buf == NULL)
		return 2;
	strcpy(buf, "hello");
	if (process(buf) < 0)
		free(buf); /* FAULT: process() already freed it */
	printf("done\n");
	return 0;
}
