# The broken-allocator check: the caching allocator built with a deliberate fault must
# make its tests fail, or the tests would not catch a real one. Included by the
# Makefile; registered in TEST_EXTRA_TARGETS for `make test`. No GPU; a few seconds.
#
#   make test-broken-allocator   links test_caching and test_caching_property against
#       lib/caching/core.c built with -DVL_CACHING_FAULT_SPLIT=512 (a split's remainder
#       starts inside the block handed out: overlapping blocks) and, as a control, with
#       the fault at 0; tests/broken_allocator/run.sh asserts that the faulty builds FAIL
#       and the control builds pass. Objects and binaries: $(BUILD)/broken/<variant>/.

.PHONY: test-broken-allocator
BROKEN_FAULT_control := 0
BROKEN_FAULT_split := 512
BROKEN_TESTS := test_caching test_caching_property
BROKEN_BINS := $(foreach v,control split,$(addprefix $(BUILD)/broken/$(v)/,$(BROKEN_TESTS)))

# Its headers through the .d beside it (the Makefile reads every .d under $(BUILD)); the
# generated header only made first (core.c includes none: no rebuild when it is rewritten).
$(BUILD)/broken/%/core.o: lib/caching/core.c | $(VERSION_H)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -DVL_CACHING_FAULT_SPLIT=$(BROKEN_FAULT_$*) -c $< -o $@

# The variant's core.o comes before the library, so the library's own is never linked.
define broken_test_rule
$(BUILD)/broken/$(1)/$(2): $(BUILD)/obj/tests/$(2).o $(BUILD)/broken/$(1)/core.o $(TEST_SUPPORT_OBJS) $(LIB_A) | setup
	@mkdir -p $$(@D)
	$(Q)$(CC) $(LDFLAGS) $$< $(BUILD)/broken/$(1)/core.o $(TEST_SUPPORT_OBJS) $(LIB_A) -L$(CMOCKA_LIBDIR) \
	  -Wl,-rpath,$(CMOCKA_LIBDIR) -lcmocka $(LDLIBS) -o $$@
endef
$(foreach v,control split,$(foreach t,$(BROKEN_TESTS),$(eval $(call broken_test_rule,$(v),$(t)))))

test-broken-allocator: $(BROKEN_BINS)
	@tests/broken_allocator/run.sh $(BUILD)/broken $(BROKEN_TESTS)

TEST_EXTRA_TARGETS += test-broken-allocator
