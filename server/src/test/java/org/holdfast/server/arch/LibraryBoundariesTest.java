package org.holdfast.server.arch;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * Which server package may use which library (docs/architecture.md, "Layers and the rules that
 * hold them"). A violation is fixed by moving the code or passing our own type across, not by
 * widening a rule.
 */
@AnalyzeClasses(packages = "org.holdfast.server", importOptions = ImportOption.DoNotIncludeTests.class)
class LibraryBoundariesTest {

    /** Spring wires and serves the core (app, including the security configuration, and api); the core never sees it. */
    @ArchTest
    static final ArchRule springOnlyInAppAndApi = noClasses()
            .that().resideOutsideOfPackages("org.holdfast.server.app..", "org.holdfast.server.api..")
            .should().dependOnClassesThat().resideInAnyPackage("org.springframework..");

    /** RocksDB stays in store and catalog; the other layers read by column and write through MetadataBatch. */
    @ArchTest
    static final ArchRule rocksDbOnlyInStoreAndCatalog = noClasses()
            .that().resideOutsideOfPackages("org.holdfast.server.store..", "org.holdfast.server.catalog..")
            .should().dependOnClassesThat().resideInAnyPackage("org.rocksdb..");

    /** The batch that crosses layers is store.MetadataBatch: RocksDB's WriteBatch is wrapped once, in store. */
    @ArchTest
    static final ArchRule writeBatchOnlyInStore = noClasses()
            .that().resideOutsideOfPackage("org.holdfast.server.store..")
            .should().dependOnClassesThat().haveFullyQualifiedName("org.rocksdb.WriteBatch");

    /** Netty serves the agent port in ingest (restore streaming included); nothing else sees channels or buffers. */
    @ArchTest
    static final ArchRule nettyOnlyInIngest = noClasses()
            .that().resideOutsideOfPackage("org.holdfast.server.ingest..")
            .should().dependOnClassesThat().resideInAnyPackage("io.netty..");

    /** The AWS SDK talks to object stores in one place; the data store sees only our ObjectStore interface. */
    @ArchTest
    static final ArchRule awsSdkOnlyInObjectStore = noClasses()
            .that().resideOutsideOfPackage("org.holdfast.server.store.object..")
            .should().dependOnClassesThat().resideInAnyPackage("software.amazon.awssdk..");

    /** BouncyCastle builds and reads certificates in one place; everything else uses the JDK's TLS types. */
    @ArchTest
    static final ArchRule bouncyCastleOnlyInTls = noClasses()
            .that().resideOutsideOfPackage("org.holdfast.server.security.tls..")
            .should().dependOnClassesThat().resideInAnyPackage("org.bouncycastle..");

    /** picocli parses the server's command line in app (ServerCli and its commands); the tools below it take typed arguments. */
    @ArchTest
    static final ArchRule picocliOnlyInApp = noClasses()
            .that().resideOutsideOfPackage("org.holdfast.server.app..")
            .should().dependOnClassesThat().resideInAnyPackage("picocli..");
}
