int main(void) { return 0; } /* being written */
