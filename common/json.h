/* JSON text that keeps every double's bits.
 *
 * cJSON prints a number with "%1.15g" and keeps it when reading it back gives a double within one
 * DBL_EPSILON of the original (cJSON 1.7's compare_double): not the same double. A spec crosses
 * from the coordinator to a worker as JSON text, so a value that lost its last bit there was a
 * different planet on the worker: the 100 km demo's rock wavelength, 100000 / 33 m, came back one
 * ulp short and every region was refused (issue 22). tb_json_print writes every number that
 * "%1.15g" does not give back exactly with "%1.17g", which always does (IEEE 754 binary64 needs at
 * most 17 significant digits); the others print as cJSON prints them, so files whose numbers were
 * exact keep their bytes.
 */
#ifndef TB_JSON_H
#define TB_JSON_H

#include <stdbool.h>

#include <cJSON.h>

/* `item` as JSON text (formatted like cJSON_Print, or like cJSON_PrintUnformatted), a malloc'd
 * string the caller frees with free(); NULL when out of memory. A number that is not finite prints
 * as cJSON prints it (null). The nodes of `item` are changed while it prints (so no other thread
 * may read it meanwhile) and restored before returning. */
char *tb_json_print(const cJSON *item, bool formatted);

#endif
