int clamp(int v, int lo, int hi);
int twice(int v);
