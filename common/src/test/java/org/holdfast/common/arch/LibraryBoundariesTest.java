package org.holdfast.common.arch;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/** Which shared package may use which library (docs/architecture.md, "Layers and the rules that hold them"). */
@AnalyzeClasses(packages = "org.holdfast.common", importOptions = ImportOption.DoNotIncludeTests.class)
class LibraryBoundariesTest {

    /** Frames, codecs and TLS engines are Netty's; ids, hashes, compression and models stay plain Java. */
    @ArchTest
    static final ArchRule nettyOnlyInProtocol = noClasses()
            .that().resideOutsideOfPackage("org.holdfast.common.protocol..")
            .should().dependOnClassesThat().resideInAnyPackage("io.netty..");
}
