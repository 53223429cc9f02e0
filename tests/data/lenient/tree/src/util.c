#include "util.h"

int clamp(int v, int lo, int hi)
{
	if (v < lo)
		return lo;
	if (v > hi)
		return hi;
	return v;
}

int twice(int v)
{
	return 2 * v;
}
