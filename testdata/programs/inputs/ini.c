/* ini: a small INI file reader for analyze reduce (docs/reduce.md). It reads
 * a file (argv[1], or standard input without one) of sections ("[name]"),
 * "key = value" lines and comments (lines starting with ';' or '#'), keeps
 * every section's entries in a list in file order, and prints them as
 * "section.key=value". A key outside any section is ignored with a warning.
 *
 * FAULT: an entry keeps its key in a 16-byte array, and the reader copies
 * the key there with its own loop and no bound. A key of 17 characters or
 * more runs over the array into the entry's next pointer, which the
 * reader has just set to NULL; the listing then follows the corrupted
 * pointer and the program is killed by SIGSEGV at the line marked CRASH.
 * ini.failing (298 bytes) and ini-large.failing (14 sections) are files
 * whose [database] section ends with such a key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

struct entry {
	char *value;
	char key[16];
	struct entry *next;
};

struct section {
	char name[32];
	struct entry *first, *last;
	struct section *next;
};

static struct section *sections, *lastSection;

static int isSpace(int c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* trim returns s without leading and trailing blanks (in place). */
static char *trim(char *s)
{
	while (isSpace(*s))
		s++;
	char *e = s;
	while (*e)
		e++;
	while (e > s && isSpace(e[-1]))
		e--;
	*e = 0;
	return s;
}

static struct section *newSection(const char *name)
{
	struct section *s = calloc(1, sizeof *s);
	int i;
	for (i = 0; name[i] && i < (int)sizeof s->name - 1; i++)
		s->name[i] = name[i];
	s->name[i] = 0;
	if (lastSection)
		lastSection->next = s;
	else
		sections = s;
	lastSection = s;
	return s;
}

static void addEntry(struct section *s, const char *key, const char *value)
{
	struct entry *e = malloc(sizeof *e);
	int i;
	e->value = strdup(value);
	e->next = NULL;
	for (i = 0; key[i]; i++) /* FAULT: no bound on the key's length */
		e->key[i] = key[i];
	e->key[i] = 0;
	if (s->last)
		s->last->next = e;
	else
		s->first = e;
	s->last = e;
}

/* readAll reads the whole file into a buffer (read(2), no stdio: the
 * analyses follow the bytes from the system call). */
static char *readAll(int fd, long *len)
{
	long cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	for (;;) {
		long got = read(fd, buf + n, cap - n);
		if (got <= 0)
			break;
		n += got;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
		}
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

int main(int argc, char **argv)
{
	int fd = 0, n = 0;
	long len, at = 0;
	struct section *cur = NULL;
	char *data;

	if (argc > 1 && (fd = open(argv[1], O_RDONLY)) < 0) {
		perror(argv[1]);
		return 2;
	}
	data = readAll(fd, &len);
	while (at < len) {
		char *l = data + at, *eq = NULL;
		long k = at;
		while (k < len && data[k] != '\n')
			k++;
		data[k] = 0;
		at = k + 1;
		n++;
		l = trim(l);
		if (*l == 0 || *l == ';' || *l == '#')
			continue;
		if (*l == '[') {
			char *end = l + 1;
			while (*end && *end != ']')
				end++;
			*end = 0;
			cur = newSection(trim(l + 1));
			continue;
		}
		for (char *c = l; *c; c++)
			if (*c == '=') {
				eq = c;
				break;
			}
		if (!eq) {
			fprintf(stderr, "ini: line %d: no '='\n", n);
			continue;
		}
		*eq = 0;
		if (!cur) {
			fprintf(stderr, "ini: line %d: key outside a section\n", n);
			continue;
		}
		addEntry(cur, trim(l), trim(eq + 1));
	}
	for (struct section *s = sections; s; s = s->next)
		for (struct entry *e = s->first; e; e = e->next)
			printf("%s.%s=%s\n", s->name, e->key, e->value); /* CRASH */
	return 0;
}
