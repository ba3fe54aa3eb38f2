/* placeholder: being written */
#include <criterion/criterion.h>
