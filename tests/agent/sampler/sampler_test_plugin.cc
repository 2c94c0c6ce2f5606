// Opened by the test library by its bare name, through its RUNPATH.
extern "C" __attribute__((visibility("default"))) int SamplerTestPlugin() { return 41; }
