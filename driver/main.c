/* main.c: the txc command line (placeholder until the driver lands). */
#include <stdio.h>
int main(void) { puts("txc"); return 0; }
