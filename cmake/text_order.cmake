# The daemon's code in one piece of the binary. The kernel maps a file's
# cached pages 64 KiB around each page fault ("fault-around"), so the 1 MiB of
# code `iowatch serve` runs, scattered among the commands' 3.5 MiB, made
# nearly all 4.6 MB of the binary's text resident in the daemon. Each function
# is compiled into a section of its own (-ffunction-sections, set with the
# tree's compile options) and lld lays out those listed in
# serve_text_order.txt (scripts/text_order.py: the functions the daemon runs,
# hottest first) before the rest. A function missing from the list still
# links, further away; layout.resident_text measures what the daemon maps.
#
# Every executable of the tree links with lld, which GCC finds as `ld.lld`
# in a folder of the tree's own (-B): the one of the clang-19 toolchain that
# scripts/install-deps.sh installs, whatever `ld.lld` the host's PATH has.

find_program(IOWATCH_LLD NAMES ld.lld PATHS /usr/lib/llvm-19/bin NO_DEFAULT_PATH)
if(NOT IOWATCH_LLD)
  message(FATAL_ERROR "lld-19 is not installed (scripts/install-deps.sh installs it), "
                      "or configure with -DIOWATCH_TEXT_ORDER=OFF")
endif()
set(IOWATCH_LINKER_DIR ${CMAKE_BINARY_DIR}/linker)
file(MAKE_DIRECTORY ${IOWATCH_LINKER_DIR})
file(CREATE_LINK ${IOWATCH_LLD} ${IOWATCH_LINKER_DIR}/ld.lld SYMBOLIC)
# Relative relocations packed (DT_RELR, glibc 2.36): the binary's table of
# them, read at each start, is 16 KB instead of 115.
add_link_options(-B${IOWATCH_LINKER_DIR}/ -fuse-ld=lld -Wl,-z,pack-relative-relocs)

set(IOWATCH_TEXT_ORDER_FILE ${CMAKE_CURRENT_LIST_DIR}/serve_text_order.txt)

# Lays out TARGET's functions in the order of serve_text_order.txt.
function(iowatch_order_text target)
  target_link_options(${target} PRIVATE -Wl,--symbol-ordering-file=${IOWATCH_TEXT_ORDER_FILE}
                                        -Wl,--no-warn-symbol-ordering)
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${IOWATCH_TEXT_ORDER_FILE})
endfunction()
