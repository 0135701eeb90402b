# libtgemm links only the database reader (and the cubin write-back's store): none of the
# tools' writing side (db/tuning_db.h and what it composes) may be in it. Run by ctest:
#   cmake -DLIBRARY=<libtgemm.so> -DNM=<nm> -P check_reader_only.cmake
execute_process(COMMAND ${NM} -C ${LIBRARY} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} could not read ${LIBRARY}")
endif()
string(REGEX MATCH "TuningDbReader::best_entries" reader "${symbols}")
if(NOT reader)
  message(FATAL_ERROR "${LIBRARY} has no TuningDbReader: is it the library, with its symbols?")
endif()
# The classes and functions of the tools' database library (CMakeLists.txt, tgemm_db).
set(forbidden TuningDb:: TrialStore:: TrialRekey:: ProfileStore:: TrialExport:: DbMaintenance::
              "tgemm::merge_from" "tgemm::migrate_file" "tgemm::integrity_problems")
set(found "")
foreach(name IN LISTS forbidden)
  string(FIND "${symbols}" "${name}" at)
  if(NOT at EQUAL -1)
    list(APPEND found ${name})
  endif()
endforeach()
if(found)
  message(FATAL_ERROR "${LIBRARY} holds the tools' database code: ${found}")
endif()
message(STATUS "${LIBRARY} holds the reader and none of: ${forbidden}")
