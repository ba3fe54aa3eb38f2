/* config.c: being written. */
