# ccache in front of the compiler when available. The sloppiness settings let ccache cache
# translation units that use a precompiled header (gcc otherwise defeats the cache).
option(TIPBENCH_USE_CCACHE "Use ccache when found" ON)
find_program(TIPBENCH_CCACHE_PROGRAM ccache)
# A bare `-DCMAKE_CXX_COMPILER_LAUNCHER=ccache` is upgraded too: without the sloppiness every
# translation unit that uses the precompiled header is "uncacheable" (ccache -s -v says so).
if(TIPBENCH_USE_CCACHE AND TIPBENCH_CCACHE_PROGRAM
   AND (NOT CMAKE_CXX_COMPILER_LAUNCHER OR CMAKE_CXX_COMPILER_LAUNCHER MATCHES "^(.*/)?ccache$"))
  set(CMAKE_CXX_COMPILER_LAUNCHER
      "${CMAKE_COMMAND};-E;env;CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime;CCACHE_BASEDIR=${PROJECT_SOURCE_DIR};${TIPBENCH_CCACHE_PROGRAM}")
endif()
