// Placeholder: implemented by the probe-engine work in progress.
namespace iowatch::probes {}
