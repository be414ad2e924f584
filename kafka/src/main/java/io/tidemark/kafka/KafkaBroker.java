package io.tidemark.kafka;

/**
 * A broker as Kafka clients see it: a replica host with a Kafka listener, by its host id.
 *
 * @param id   the host id.
 * @param host the advertised host name or address.
 * @param port the advertised port.
 */
public record KafkaBroker(int id, String host, int port)
{
}
