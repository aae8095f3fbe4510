// Not compiled: the planted offender of ctest layering.decode-once.selftest, a view that classifies
// slice names itself instead of reading slice::kind. The check must find it.
bool is_node(std::string_view name) { return vocab::classify_slice(name) == vocab::slice_class::node; }
