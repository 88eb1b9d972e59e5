/* markup: a toy frameset document parser built like the running example of
 * chapter 4 of Yan Wang's dissertation ("Dynamic Analysis Techniques for
 * Effective and Efficient Debugging", UC Riverside, 2014), a simplified
 * NULL dereference of HTML Tidy. It reads a document (argv[1], or standard
 * input without one) of one-character entities:
 *
 *   H header  S frameset  F frame  N noframes  B body  P paragraph
 *   "x" a one-character text   / closes the element that follows (/P, /B ...)
 *
 * A document is an optional header (H"t"/H) and a frameset. A frameset
 * holds frames and framesets (nested to any depth), then a noframes
 * element that holds a body, which holds paragraphs. Paragraphs met in a
 * noframes element before the body are discarded; paragraphs met after the
 * body's end (/B) are moved into the body, which FindBody looks up.
 *
 * FAULT: FindBody assumes that the noframes element sits in the outermost
 * frameset. When it sits in an inner frameset, FindBody returns NULL and
 * the first paragraph after /B is added to a NULL parent: AddChild reads
 * through the NULL pointer (the line marked CRASH) and the program is
 * killed by SIGSEGV. markup.failing is the dissertation's 59-entity input;
 * "SSNB/BP" is a 1-minimal failing input.
 *
 * The input is read with read(2) into a buffer that GetChar walks, and the
 * tokens are compared with chains of ==, never a switch: the analyses of
 * docs/reduce.md follow the comparisons (a jump table would make every
 * token an address dependence). Build it with -O0. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { HTAG = 1, STAG, FTAG, NOFTAG, BTAG, PTAG };

typedef struct Node {
	int type;
	char text;
	struct Node *firstChild, *lastChild, *sibling;
} Node;

typedef struct Doc {
	int seeEndBody;
	Node *head;
	Node *fS; /* the outermost frameset */
} Doc;

typedef struct Stream {
	int fd;
	char buf[4096];
	char *r_ptr, *r_end;
} Stream;

static Doc *doc;
static Stream *fin;

static void ParseFrameSet(Node *p);
static void ParseParagraphs(Node *b);

static int RefillBuf(Stream *fp)
{
	ssize_t n = read(fp->fd, fp->buf, sizeof fp->buf);
	if (n <= 0)
		return -1;
	fp->r_ptr = fp->buf;
	fp->r_end = fp->buf + n;
	return *(fp->r_ptr++);
}

static int GetChar(Stream *fp)
{
	if (fp->r_ptr >= fp->r_end)
		return RefillBuf(fp);
	return *(fp->r_ptr++);
}

static void Ungetc(int c, Stream *fp)
{
	if (c != -1)
		fp->r_ptr--;
}

static int PeekChar(Stream *fp)
{
	int c = GetChar(fp);
	Ungetc(c, fp);
	return c;
}

static void Warn(const char *what)
{
	fprintf(stderr, "markup: %s\n", what);
}

static Node *NewNode(int type)
{
	Node *node = malloc(sizeof *node);
	node->type = type;
	node->text = 0;
	node->firstChild = NULL;
	node->lastChild = NULL;
	node->sibling = NULL;
	return node;
}

static void AddChild(Node *p, Node *c)
{
	if (p->lastChild != NULL) /* CRASH */
		p->lastChild->sibling = c;
	else
		p->firstChild = c;
	p->lastChild = c;
}

static void ParseTextNode(Node *p)
{
	int c = GetChar(fin);
	if (c == '"') {
		c = GetChar(fin);
		if (p)
			p->text = (char)c;
		c = GetChar(fin);
		if (c != '"')
			Warn("unterminated text");
	} else
		Ungetc(c, fin);
}

/* FindBody returns the body of the noframes element of the outermost
 * frameset. */
static Node *FindBody(void)
{
	Node *node = doc->fS;
	if (node == NULL)
		return NULL;
	node = node->firstChild;
	while (node && node->type != NOFTAG) /* FAULT: inner framesets are not searched */
		node = node->sibling;
	if (node) {
		node = node->firstChild;
		while (node && node->type != BTAG)
			node = node->sibling;
	}
	return node;
}

/* ConsumeParagraphs skips paragraphs that sit outside a body. */
static void ConsumeParagraphs(void)
{
	int c = GetChar(fin);
	while (c == 'P') {
		ParseTextNode(NULL);
		c = GetChar(fin);
		if (c == '/') {
			c = GetChar(fin);
			if (c != 'P')
				Warn("expected /P");
		} else {
			Warn("expected /P");
			Ungetc(c, fin);
		}
		c = GetChar(fin);
	}
	Ungetc(c, fin);
}

static void HandlePsOutsideBody(void)
{
	if (doc->seeEndBody == 1) {
		Node *body = FindBody();
		ParseParagraphs(body);
	} else
		ConsumeParagraphs();
}

static void ParseParagraphs(Node *b)
{
	int c = GetChar(fin);
	while (c == 'P') {
		Node *p = NewNode(PTAG);
		AddChild(b, p);
		ParseTextNode(p);
		c = GetChar(fin);
		if (c == '/') {
			c = GetChar(fin);
			if (c != 'P')
				Warn("expected /P");
		} else {
			Warn("expected /P");
			Ungetc(c, fin);
		}
		c = GetChar(fin);
	}
	Ungetc(c, fin);
}

static void ParseBody(Node *noF)
{
	int c = GetChar(fin);
	if (c == 'B') {
		Node *body = NewNode(BTAG);
		AddChild(noF, body);
		ParseParagraphs(body);
		c = GetChar(fin);
		if (c == '/') {
			c = GetChar(fin);
			if (c == 'B')
				doc->seeEndBody = 1;
			else
				Warn("expected /B");
		} else
			Ungetc(c, fin);
	} else
		Ungetc(c, fin);
}

static void ParseNoFrame(Node *fS)
{
	int c = GetChar(fin);
	if (c == 'N') {
		Node *noF = NewNode(NOFTAG);
		AddChild(fS, noF);
		HandlePsOutsideBody();
		ParseBody(noF);
		c = GetChar(fin);
		if (c == '/') {
			c = GetChar(fin);
			if (c != 'N')
				Warn("expected /N");
		} else
			Ungetc(c, fin);
	} else
		Ungetc(c, fin);
	HandlePsOutsideBody(); /* paragraphs after the body's end */
}

static void ParseFrame(Node *fS)
{
	int c = GetChar(fin);
	if (c == 'F') {
		Node *f = NewNode(FTAG);
		AddChild(fS, f);
	}
}

static void ParseFrameSet(Node *p)
{
	Node *fS = NULL;
	int c = GetChar(fin);
	if (c == 'S') {
		fS = NewNode(STAG);
		if (p)
			AddChild(p, fS);
		if (doc->fS == NULL)
			doc->fS = fS;
		c = PeekChar(fin);
		while (c == 'S' || c == 'F') {
			if (c == 'S')
				ParseFrameSet(fS);
			else
				ParseFrame(fS);
			c = PeekChar(fin);
		}
		ParseNoFrame(fS);
		c = GetChar(fin);
		if (c == '/') {
			c = GetChar(fin);
			if (c != 'S')
				Warn("expected /S");
		} else
			Ungetc(c, fin);
	} else
		Ungetc(c, fin);
}

static Node *ParseHead(void)
{
	int c = GetChar(fin);
	if (c == 'H') {
		Node *head = NewNode(HTAG);
		ParseTextNode(head);
		c = GetChar(fin);
		if (c == '/') {
			c = GetChar(fin);
			if (c != 'H')
				Warn("expected /H");
		} else
			Ungetc(c, fin);
		return head;
	}
	Ungetc(c, fin);
	return NULL;
}

static void ParseHtmlDoc(void)
{
	doc = malloc(sizeof *doc);
	doc->seeEndBody = 0;
	doc->head = ParseHead();
	doc->fS = NULL;
	ParseFrameSet(NULL);
}

int main(int argc, char **argv)
{
	static Stream s;
	s.fd = 0;
	if (argc > 1 && (s.fd = open(argv[1], O_RDONLY)) < 0) {
		perror(argv[1]);
		return 2;
	}
	s.r_ptr = s.r_end = s.buf;
	fin = &s;
	ParseHtmlDoc();
	printf("parsed: %s\n", doc->fS ? "frameset" : "empty");
	return 0;
}
