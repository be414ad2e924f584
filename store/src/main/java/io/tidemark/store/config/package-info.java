/**
 * Configuration keys defined once: {@link io.tidemark.store.config.ConfigKey} (name, type, default, accepted values,
 * documentation) and {@link io.tidemark.store.config.ConfigDef} (the keys of one context class bound to its fields),
 * from which every context of Tidemark ({@code LogContext}, {@code ReplicationContext}, the host's and the Kafka
 * listener's settings) makes its key list, its parsing of properties, its validation and its documentation table.
 * <p>
 * May depend on: the JDK and the store's {@code ConfigException}; nothing else of the store
 * (checkstyle/import-control.xml enforces it), so that every module can use it.
 */
package io.tidemark.store.config;
