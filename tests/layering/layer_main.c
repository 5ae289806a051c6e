/* The program each layer check links (see the top-level CMakeLists.txt):
 * it only has to link, so it does nothing. */
int main(void) { return 0; }
