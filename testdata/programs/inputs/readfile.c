/* readfile: reads a file with read() in 64 KiB pieces, for measuring what
 * capturing input costs the recorder (docs/record.md, "Performance").
 * Usage: readfile FILE [all]: with "all" it sums every byte read (a load
 * per byte), otherwise one byte per 4 KiB. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static unsigned char buf[65536];

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		return 3;
	int all = argc > 2 && strcmp(argv[2], "all") == 0;
	unsigned long sum = 0, total = 0;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n; i += all ? 1 : 4096)
			sum += buf[i];
		total += n;
	}
	printf("%lu bytes, sum %lu\n", total, sum);
	return 0;
}
