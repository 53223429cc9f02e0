/* hello: print a greeting, count its letters */
#include <stdio.h>
#include <string.h>

static int verbose;

static size_t count(const char *s)
{
	size_t n = 0;

	while (*s++)
		n++;

	return n;
}

int main(int argc, char **argv)
{
	const char *who = argc > 1 ? argv[1] : "world";

	if (verbose)
		fprintf(stderr, "greeting %s\n", who);

	printf("hello, %s (%zu)\n", who, count(who));
	return 0;
}
