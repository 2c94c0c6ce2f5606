// jemalloc reads this compiled-in configuration at start-up: profiling is
// enabled but inactive, sampling every 1 KiB so small tests see samples.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "prof:true,prof_active:false,lg_prof_sample:10";
}
