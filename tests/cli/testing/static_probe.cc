// A statically linked program (no PT_INTERP) for ElfInspector and `run` tests.
int main() { return 0; }
