/* Compiled into each library so a directory with no sources yet still yields a valid target. */
typedef int tb_empty_translation_unit;
